/*
 * test_suggest: "did you mean" (suggest.h). The distance counts a swap of
 * neighbours as one edit; a word suggests those that begin with it or hold
 * it, else the nearest within a third of its length, and nothing for an
 * unrelated word. On the real tables: run's options, the protocols (serve's
 * only those with a server), the stacks, and what run's parser says (its
 * protocols' option words too, a word of pg's --auth-method list among them).
 */
/* cmocka needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/options.h"
#include "run.h"
#include "suggest.h"

static void test_distance(void **state)
{
    (void)state;
    assert_int_equal(suggest_distance("echo", "echo"), 0);
    assert_int_equal(suggest_distance("ehco", "echo"), 1); /* a swap is one edit */
    assert_int_equal(suggest_distance("duraton", "duration"), 1);
    assert_int_equal(suggest_distance("rn", "run"), 1);
    assert_int_equal(suggest_distance("ECHO", "echo"), 0); /* case is ignored */
    assert_int_equal(suggest_distance("kitten", "sitting"), 3);
    assert_int_equal(suggest_distance("", "abc"), 3);
    assert_int_equal(suggest_distance("abc", ""), 3);
    assert_int_equal(suggest_distance("ca", "abc"), 3); /* OSA: no edit of a swapped pair */
}

/* What suggest_text says for word among the NULL-terminated words. */
static const char *near(const char *word, const char *const *words, bool dashes)
{
    static char buf[256];
    struct suggest s;

    suggest_init(&s, word);
    for (; *words != NULL; words++)
        suggest_add(&s, *words);
    return suggest_text(&s, dashes, buf, sizeof(buf));
}

static void test_words(void **state)
{
    static const char *const cmds[] = { "lab",  "run",   "serve", "compare", "merge",   "report",
                                        "cost", "stack", "agent", "help",    "version", NULL };
    static const char *const stacks[] = { "redis",        "nginx-fpm",  "apache-fpm",
                                          "lighttpd-fpm", "php-method", "redis-mariadb",
                                          "postgres",     NULL };

    (void)state;
    assert_string_equal(near("rn", cmds, false), "; did you mean 'run'?");
    assert_string_equal(near("sevre", cmds, false), "; did you mean 'serve'?");
    assert_string_equal(near("STACK", cmds, false), "; did you mean 'stack'?");
    assert_string_equal(near("frobnicate", cmds, false), ""); /* nothing near */
    assert_string_equal(near("", cmds, false), "");
    assert_string_equal(near("nginx", stacks, false), "; did you mean 'nginx-fpm'?");
    assert_string_equal(near("fpm", stacks, false),
                        "; did you mean one of 'nginx-fpm', 'apache-fpm', 'lighttpd-fpm'?");
    /* a prefix outranks an edit: redis itself and redis-mariadb, not postgres */
    assert_string_equal(near("redi", stacks, false),
                        "; did you mean one of 'redis', 'redis-mariadb'?");
    assert_string_equal(near("postgre", stacks, false), "; did you mean 'postgres'?");
    assert_string_equal(near("pgsql", stacks, false), "");
    /* at most SUGGEST_MAX, in the order offered */
    assert_string_equal(near("e", cmds, false), "");
    assert_string_equal(near("dura", (const char *const[]){ "duration", NULL }, true),
                        "; did you mean --duration?");
}

/* The options, protocols and stacks of the real tables. */
static void test_tables(void **state)
{
    char buf[256];

    (void)state;
    assert_string_equal(cmd_suggest_option(cmd_run.options, "--duraton", buf, sizeof(buf)),
                        "; did you mean --duration?");
    assert_string_equal(cmd_suggest_option(cmd_run.options, "--duraton=5", buf, sizeof(buf)),
                        "; did you mean --duration?");
    assert_string_equal(cmd_suggest_option(cmd_run.options, "--conections", buf, sizeof(buf)),
                        "; did you mean --connections?");
    assert_string_equal(cmd_suggest_option(cmd_lab.options, "--size", buf, sizeof(buf)),
                        "; did you mean --sizes?");
    assert_string_equal(cmd_suggest_option(cmd_run.options, "--xyzzy", buf, sizeof(buf)), "");
    assert_string_equal(cmd_suggest_proto("ehco", false, buf, sizeof(buf)),
                        "; did you mean 'echo'?");
    assert_string_equal(cmd_suggest_proto("HTTP", false, buf, sizeof(buf)),
                        "; did you mean 'http'?");
    assert_string_equal(cmd_suggest_proto("pgg", false, buf, sizeof(buf)), "; did you mean 'pg'?");
    /* serve and the lab: only a protocol with a built-in server */
    assert_string_equal(cmd_suggest_proto("pgg", true, buf, sizeof(buf)), "");
}

/* run's parser says it: an unknown option, an ambiguous one, a mistyped protocol. */
static void test_run_says(void **state)
{
    static struct run_opts o;
    struct hb_err err = { 0 };
    char w[4][32];
    char *argv[4];

    (void)state;
    snprintf(w[0], sizeof(w[0]), "run");
    snprintf(w[1], sizeof(w[1]), "--duraton=3");
    snprintf(w[2], sizeof(w[2]), "echo");
    snprintf(w[3], sizeof(w[3]), "unix:/x");
    for (int i = 0; i < 4; i++)
        argv[i] = w[i];
    assert_int_equal(cli_parse_run(4, argv, &o, stdout, &err), -EINVAL);
    assert_string_equal(err.msg, "run: unknown option '--duraton'; did you mean --duration?");

    snprintf(w[1], sizeof(w[1]), "--qui");
    for (int i = 0; i < 4; i++)
        argv[i] = w[i];
    assert_int_equal(cli_parse_run(4, argv, &o, stdout, &err), 0); /* a unique prefix is taken */

    snprintf(w[1], sizeof(w[1]), "--server");
    for (int i = 0; i < 4; i++)
        argv[i] = w[i];
    assert_int_equal(cli_parse_run(4, argv, &o, stdout, &err), -EINVAL);
    /* those that begin with it, and --no-server-lookup, which holds it */
    assert_string_equal(err.msg, "run: ambiguous option '--server'; did you mean one of "
                                 "--server-pid, --no-server-lookup, --server-tree, "
                                 "--server-cgroup?");

    snprintf(w[1], sizeof(w[1]), "ehco");
    snprintf(w[2], sizeof(w[2]), "unix:/x");
    for (int i = 0; i < 3; i++)
        argv[i] = w[i];
    assert_int_equal(cli_parse_run(3, argv, &o, stdout, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "run: unknown protocol 'ehco' (known: "));
    assert_non_null(strstr(err.msg, "); did you mean 'echo'?"));

    /* a protocol option's word, by the protocol's own list: memcached's, redis's, http's */
    snprintf(w[1], sizeof(w[1]), "--command=gte");
    snprintf(w[2], sizeof(w[2]), "memcached");
    snprintf(w[3], sizeof(w[3]), "unix:/x");
    for (int i = 0; i < 4; i++)
        argv[i] = w[i];
    assert_int_equal(cli_parse_run(4, argv, &o, stdout, &err), -EINVAL);
    assert_string_equal(err.msg, "--command: 'gte' is not get or set; did you mean 'get'?");
    snprintf(w[1], sizeof(w[1]), "--command=pnig");
    snprintf(w[2], sizeof(w[2]), "redis");
    assert_int_equal(cli_parse_run(4, argv, &o, stdout, &err), -EINVAL);
    assert_string_equal(err.msg, "--command: 'pnig' is not ping, set or get; did you mean 'ping'?");
    snprintf(w[1], sizeof(w[1]), "--method=post");
    snprintf(w[2], sizeof(w[2]), "http");
    assert_int_equal(cli_parse_run(4, argv, &o, stdout, &err), -EINVAL);
    assert_string_equal(err.msg, "--method: 'post' is not GET or POST; did you mean 'POST'?");

    /* pg's --auth-method, a list: the nearest to its word that is none; nothing for one again */
    snprintf(w[2], sizeof(w[2]), "pg");
    snprintf(w[1], sizeof(w[1]), "--auth-method=scram");
    assert_int_equal(cli_parse_run(4, argv, &o, stdout, &err), -EINVAL);
    assert_string_equal(err.msg, "--auth-method: 'scram' is not a list of scram-sha-256, md5, "
                                 "password and none, each once; did you mean 'scram-sha-256'?");
    snprintf(w[1], sizeof(w[1]), "--auth-method=md5,pasword");
    assert_int_equal(cli_parse_run(4, argv, &o, stdout, &err), -EINVAL);
    assert_string_equal(err.msg, "--auth-method: 'md5,pasword' is not a list of scram-sha-256, "
                                 "md5, password and none, each once; did you mean 'password'?");
    snprintf(w[1], sizeof(w[1]), "--auth-method=md5,md5");
    assert_int_equal(cli_parse_run(4, argv, &o, stdout, &err), -EINVAL);
    assert_string_equal(err.msg, "--auth-method: 'md5,md5' is not a list of scram-sha-256, md5, "
                                 "password and none, each once");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_distance),
        cmocka_unit_test(test_words),
        cmocka_unit_test(test_tables),
        cmocka_unit_test(test_run_says),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
