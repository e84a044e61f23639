/*
 * test_registry: the list of protocols (registry.h). Every entry joins a
 * codec and a server part of its own name; names are unique and found;
 * proto_names() and the --help texts list exactly the entries, in the words
 * the texts said when they were written by hand (memcached added); an option of
 * another protocol is refused naming the protocols that take it (checked for
 * every entry and every option, so a new entry is covered), and the command
 * line prints the same lines through the registry; every option an entry
 * lists is in run's option table and --help, parsed by its hook, and refused
 * for a protocol that does not take it; --password-file refuses a file its
 * group or others may read or write.
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
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/options.h"
#include "cmd/serve.h"
#include "lab.h"
#include "proto/fcgi.h"
#include "proto/mysql.h"
#include "proto/pg.h"
#include "proto/resp.h"
#include "registry.h"
#include "run.h"

/* A value each option's hook accepts; an option missing here fails test_options. */
static const char *valid_value(const char *name);

/* A password file of mode 0600 holding "pw", made by pw_file_make. */
static char pw_file[] = "/tmp/test_registry.XXXXXX";

static void pw_file_make(mode_t mode)
{
    int fd;

    strcpy(pw_file, "/tmp/test_registry.XXXXXX");
    fd = mkstemp(pw_file);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "pw\nnext\n", 8), 8);
    assert_int_equal(fchmod(fd, mode), 0);
    close(fd);
}

/* Does pe take option `name`, unconditionally (no `when`)? */
static bool takes_always(const struct proto_entry *pe, const char *name)
{
    const struct proto_take *t = proto_takes(pe, name);

    return t != NULL && t->when == NULL;
}

static void test_entries(void **state)
{
    size_t n = proto_count();

    (void)state;
    assert_true(n >= 4);
    assert_ptr_equal(proto_lab_default(), proto_at(0));
    assert_null(proto_at(n));
    for (size_t i = 0; i < n; i++) {
        const struct proto_entry *e = proto_at(i);
        assert_non_null(e->codec);
        /* a protocol without a built-in server (the databases) is measured against real ones */
        assert_true(e->server == NULL || e->server->process != NULL);
        assert_string_equal(e->codec->name, e->name);
        if (e->server != NULL) {
            assert_string_equal(e->server->name, e->name);
            assert_non_null(e->serve_words);
            assert_non_null(e->lab_words);
        }
        assert_ptr_equal(proto_find(e->name), e);
        assert_ptr_equal(codec_find(e->name), e->codec);
        assert_true(e->opts_size <= CODEC_OPTS_MAX);
        assert_true(e->takes == NULL || e->opts_size > 0);
        for (const struct proto_take *t = e->takes; t != NULL && t->opt != NULL; t++) {
            assert_non_null(t->opt->parse);
            assert_true(t->at < e->opts_size);
            assert_true(t->when == NULL || e->check != NULL);
            /* one take per name */
            assert_ptr_equal(proto_takes(e, t->opt->name), t);
        }
        for (size_t j = 0; j < i; j++) {
            assert_string_not_equal(e->name, proto_at(j)->name);
            assert_ptr_not_equal(e->codec, proto_at(j)->codec);
            if (e->server != NULL) assert_ptr_not_equal(e->server, proto_at(j)->server);
        }
    }
    assert_null(proto_find(""));
    assert_null(proto_find("ech"));
    assert_null(proto_find("echo2"));
    assert_null(proto_find("ECHO"));
}

/* proto_names() is the table's names in order, joined by ", ". */
static void test_names(void **state)
{
    size_t n = proto_count(), len = 0;
    char want[256] = "";

    (void)state;
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(want + len, sizeof(want) - len, "%s%s", i ? ", " : "",
                                proto_at(i)->name);
    assert_string_equal(proto_names(), want);
    assert_string_equal(codec_names(), want);
}

static bool any(const struct proto_entry *pe, const char *arg)
{
    (void)pe;
    (void)arg;
    return true;
}

static bool first_only(const struct proto_entry *pe, const char *arg)
{
    (void)arg;
    return pe == proto_lab_default();
}

static void test_list(void **state)
{
    size_t n = proto_count();
    char buf[256], want[256];

    (void)state;
    assert_string_equal(proto_list(buf, sizeof(buf), first_only, NULL, NULL), proto_at(0)->name);
    snprintf(want, sizeof(want), "%s and %s", proto_at(n - 2)->name, proto_at(n - 1)->name);
    proto_list(buf, sizeof(buf), any, NULL, NULL);
    assert_non_null(strstr(buf, want));
    assert_int_equal(strlen(buf), strlen(proto_names()) + strlen(" and") - strlen(","));
    /* a short buffer is cut, never overrun */
    assert_int_equal(strlen(proto_list(buf, 6, any, NULL, NULL)), 5);
}

/*
 * Each option alone, for each protocol, through the registry (proto_parse,
 * proto_check_run): refused, naming who takes it, unless this one does.
 */
static void test_every_option(void **state)
{
    size_t n = proto_count();
    const char *name;
    static const char *params[4];
    static char body[64], secret[300], key[MYSQL_MAX_KEY + 1];
    const struct proto_args args = { params,         4,   body,       sizeof(body), secret,
                                     sizeof(secret), key, sizeof(key) };

    (void)state;
    pw_file_make(0600);
    for (size_t i = 0; i < n; i++) {
        const struct proto_entry *e = proto_at(i);
        for (unsigned k = 0; (name = proto_option_name(k)) != NULL; k++) {
            union codec_room room;
            struct proto_given given = { k, valid_value(name) };
            size_t size = 64;
            struct proto_req req = { .opts = &room, .size = &size, .pipeline = 1 };
            struct hb_err err = { 0 };
            char head[64];
            const char *list;
            int rc;

            assert_non_null(given.val);
            assert_int_equal(proto_parse(e, &given, 1, &args, &room, &err), 0);
            rc = proto_check_run(e, &given, 1, &req, &err);
            list = strstr(err.msg, " for ");
            if (takes_always(e, name)) {
                /* its own option: accepted, or refused by its check for another reason */
                assert_true(rc == 0 || list == NULL);
                continue;
            }
            /* taken only as `when` says: refused as another protocol's option would be */
            if (proto_takes(e, name) != NULL && rc == 0) continue;
            assert_int_equal(rc, -EINVAL);
            snprintf(head, sizeof(head), "run %s: ", e->name);
            assert_int_equal(strncmp(err.msg, head, strlen(head)), 0);
            assert_non_null(strstr(err.msg, name));
            assert_non_null(list);
            for (size_t j = 0; j < n; j++)
                assert_int_equal(strstr(list, proto_at(j)->name) != NULL,
                                 proto_takes(proto_at(j), name) != NULL);
        }
    }
    unlink(pw_file);
}

/* What `run` prints for a command line (argv without the program), or "" when it parses. */
static const char *run_error(struct hb_err *err, int argc, char **argv)
{
    struct run_opts o;

    memset(err, 0, sizeof(*err));
    if (cli_parse_run(argc, argv, &o, stdout, err) == 0) return "";
    return err->msg;
}

static void test_run_messages(void **state)
{
    struct hb_err err;
    char run[] = "run", echo[] = "echo", redis[] = "redis", http[] = "http", ep[] = "unix:/x";
    char method[] = "--method", get[] = "GET", keys[] = "--keys", five[] = "5";
    char body[] = "--expect-body", x[] = "x", size[] = "--size", ten[] = "10";
    char cmd[] = "--command", gopher[] = "gopher";
    char *a1[] = { run, echo, ep, method, get, NULL };
    char *a2[] = { run, echo, ep, keys, five, NULL };
    char *a3[] = { run, redis, ep, body, x, NULL };
    char *a4[] = { run, http, ep, size, ten, NULL };
    char *a5[] = { run, redis, ep, cmd, get, body, x, NULL };
    char *a6[] = { run, gopher, ep, NULL };

    (void)state;
    assert_string_equal(run_error(&err, 5, a1),
                        "run echo: --method, --path and --host are for http and fcgi");
    assert_string_equal(run_error(&err, 5, a2),
                        "run echo: --command and --keys are for redis and memcached");
    assert_string_equal(
        run_error(&err, 5, a3),
        "run redis: --expect-body is for http, fcgi, redis --command get, pg and mysql");
    assert_string_equal(run_error(&err, 5, a4),
                        "run http: --size is the body of a POST; add --method POST");
    memcpy(get, "get", 4);
    assert_string_equal(run_error(&err, 7, a5), "");
    assert_string_equal(
        run_error(&err, 3, a6),
        "run: unknown protocol 'gopher' (known: echo, http, fcgi, redis, pg, mysql, memcached)");
}

static void test_serve_lab_messages(void **state)
{
    struct hb_err err = { 0 };
    struct serve_opts so;
    struct lab_opts lo;
    char serve[] = "serve", echo[] = "echo", http[] = "http", listen[] = "--listen";
    char ep[] = "unix:/x", bsize[] = "--body-size", ten[] = "10", lab[] = "lab";
    char proto[] = "--proto", gopher[] = "gopher", redis[] = "redis";
    char *s1[] = { serve, echo, listen, ep, bsize, ten, NULL };
    char *s2[] = { serve, http, listen, ep, bsize, ten, NULL };
    char *l1[] = { lab, proto, gopher, NULL };
    char *l2[] = { lab, proto, redis, NULL };

    (void)state;
    assert_int_equal(cli_parse_serve(6, s1, &so, stdout, &err), -EINVAL);
    assert_string_equal(err.msg, "serve echo: --body-size is for http and fcgi");
    assert_int_equal(cli_parse_serve(6, s2, &so, stdout, &err), 0);
    assert_ptr_equal(so.proto, proto_find("http"));
    assert_int_equal(cli_parse_lab(3, l1, &lo, stdout, &err), -EINVAL);
    assert_string_equal(err.msg,
                        "--proto: 'gopher' is not one of echo, http, fcgi, redis, pg, mysql, "
                        "memcached");
    assert_int_equal(cli_parse_lab(3, l2, &lo, stdout, &err), 0);
    assert_ptr_equal(lo.proto, proto_find("redis"));
    assert_int_equal(((const struct resp_opts *)lo.proto->lab_opts)->command.cmd, REDIS_SET);
}

/*
 * c's --help as it prints it, or with c NULL the top-level help (one at a
 * time: the last one is freed by the next call).
 */
static const char *help_of(const struct command *c)
{
    static const struct command *const cmds[] = { &cmd_lab,     &cmd_run,   &cmd_serve,
                                                  &cmd_compare, &cmd_merge, &cmd_report,
                                                  &cmd_cost,    &cmd_stack, &cmd_agent };
    static char *text;
    size_t len = 0;
    FILE *f;

    free(text);
    text = NULL;
    f = open_memstream(&text, &len);
    assert_non_null(f);
    if (c != NULL)
        cmd_help(c, f);
    else
        cmd_usage(f, cmds, ARRAY_LEN(cmds));
    fclose(f);
    return text;
}

/* The text of the option `opt` in a --help text: its line and the indented lines after it. */
static void option_text(const char *help, const char *opt, char *out, size_t cap)
{
    const char *p = strstr(help, opt), *end;

    assert_non_null(p);
    end = strstr(p, "\n      --");
    if (end == NULL) end = p + strlen(p);
    snprintf(out, cap, "%.*s", (int)(end - p), p);
}

/* The help texts list exactly the table: a new entry fails here until they name it. */
static void test_help(void **state)
{
    size_t n = proto_count();
    const struct proto_entry *e[16];
    char want[256] = "PROTO:    ", text[1024];
    size_t len = strlen(want);
    const char *help;

    (void)state;
    assert_true(n <= ARRAY_LEN(e));
    for (size_t i = 0; i < n; i++)
        e[i] = proto_at(i);
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(want + len, sizeof(want) - len, "%s%s", i ? " | " : "", e[i]->name);
    snprintf(want + len, sizeof(want) - len, "\n");
    assert_non_null(strstr(help_of(NULL), want));
    /* the lab's other protocols, the default (the first) aside */
    len = (size_t)snprintf(want, sizeof(want), "--proto ");
    for (size_t i = 1, k = 0; i < n; i++)
        if (e[i]->server != NULL)
            len += (size_t)snprintf(want + len, sizeof(want) - len, "%s%s", k++ ? "|" : "",
                                    e[i]->name);
    snprintf(want + len, sizeof(want) - len, " ");
    assert_non_null(strstr(help_of(NULL), want));
    /* the lab's and serve's protocols are those with a built-in server */
    option_text(help_of(&cmd_lab), "--proto P", text, sizeof(text));
    for (size_t i = 0; i < n; i++)
        assert_int_equal(strstr(text, e[i]->name) != NULL, e[i]->server != NULL);
    option_text(help_of(&cmd_run), "--size BYTES", text, sizeof(text));
    for (size_t i = 0; i < n; i++)
        assert_non_null(strstr(text, e[i]->name));
    option_text(help_of(&cmd_serve), "--body-size B", text, sizeof(text));
    for (size_t i = 0; i < n; i++)
        assert_int_equal(strstr(text, e[i]->name) != NULL, e[i]->reply_body);
    help = help_of(&cmd_serve);
    for (size_t i = 0; i < n; i++) {
        snprintf(want, sizeof(want), " %s (", e[i]->name);
        assert_int_equal(strstr(help, want) != NULL, e[i]->server != NULL);
    }
}

/* A value each option's hook accepts; an option missing here fails test_options. */
static const char *valid_value(const char *name)
{
    static const char *const values[][2] = {
        { "--method", "POST" },
        { "--path", "/x" },
        { "--host", "h" },
        { "--expect-body", "x" },
        { "--script", "/s" },
        { "--docroot", "/d" },
        { "--query", "q=1" },
        { "--param", "A=1" },
        { "--command", "get" },
        { "--keys", "7" },
        { "--sql", "SELECT 2" },
        { "--user", "u" },
        { "--password", "pw" },
        { "--password-file", pw_file },
        { "--database", "d" },
        { "--extended", "" },
        { "--ping", "" },
        { "--auth-method", "md5,scram-sha-256" },
        { "--server-public-key", "tests/fixtures/mysql/server_public_key.pem" },
        { "--get-server-public-key", "" },
    };

    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
        if (strcmp(values[i][0], name) == 0) return values[i][1];
    return NULL;
}

/*
 * The --help texts' words about the protocols, made from the entries, are
 * the texts as they were written by hand, wrapped where those were; a name
 * list is never broken across lines.
 */
static void test_help_words(void **state)
{
    char buf[1024];

    (void)state;
    assert_string_equal(proto_help(PROTO_HELP_NAMES, buf, sizeof(buf), 0, 0),
                        "echo | http | fcgi | redis | pg | mysql | memcached");
    assert_string_equal(proto_help(PROTO_HELP_LAB_OTHERS, buf, sizeof(buf), 0, 0),
                        "http|fcgi|redis|memcached");
    assert_string_equal(proto_help(PROTO_HELP_REPLY_BODY, buf, sizeof(buf), 0, 0), "http, fcgi");
    assert_string_equal(proto_help(PROTO_HELP_VALUE_SIZE, buf, sizeof(buf), 0, 0),
                        "redis, memcached");
    /* serve's, after "server may have taken it over). PROTO:" */
    assert_string_equal(
        proto_help(PROTO_HELP_SERVE, buf, sizeof(buf), 38, 0),
        " echo (every byte back), http (200 with a short\n"
        "body), fcgi (a FastCGI responder answering 'bench'), redis (PING, ECHO, GET, SET, DEL,\n"
        "DBSIZE, FLUSHALL, INFO, QUIT, in memory), memcached (get, set, delete, stats, version,\n"
        "quit, in memory; no authentication)");
    /* run --size's, after its head at column 24 + 60: "pg, mysql:" is not broken */
    assert_string_equal(
        proto_help(PROTO_HELP_RUN_SIZE, buf, sizeof(buf), 84, 24),
        " echo:\n"
        "                        the message; http, fcgi: the POST body; redis: the "
        "SET value;\n"
        "                        pg, mysql: none (a query has no payload); memcached: the set "
        "value");
    assert_string_equal(proto_help(PROTO_HELP_LAB, buf, sizeof(buf), 24, 24),
                        "echo (default), http, fcgi, redis or memcached: the built-in\n"
                        "                        server and the client speak it; sizes are the "
                        "echo message, the\n"
                        "                        http and fcgi reply body, the redis SET value, "
                        "the memcached set\n"
                        "                        value");
    /* a short buffer is cut, never overrun */
    assert_int_equal(strlen(proto_help(PROTO_HELP_LAB, buf, 8, 24, 24)), 7);
}

/*
 * Each entry's options are its opts bits; run's table and --help carry every
 * option of the registry; on the command line each is parsed by its hook for
 * a protocol that takes it and refused, naming who does, for one that does not.
 */
static void test_options(void **state)
{
    size_t n = proto_count(), nopts = 0;
    const struct proto_option *po;

    (void)state;
    pw_file_make(0600);
    for (; (po = proto_option_at(nopts)) != NULL; nopts++) {
        char want[64], run[] = "run", ep[] = "unix:/x", name[32], val[64], proto[16];
        char *argv[] = { run, proto, ep, name, val, NULL };
        bool some = false;

        assert_string_equal(proto_option_name(nopts), po->name);
        assert_non_null(po->parse);
        assert_non_null(valid_value(po->name));
        /* found through the registry: run's table and its --help */
        assert_int_equal(strncmp(po->name, "--", 2), 0);
        assert_true(cmd_option(cmd_run.options, po->name) >= 256);
        snprintf(want, sizeof(want), "\n      %s%s%s ", po->name, po->arg ? " " : "",
                 po->arg ? po->arg : "");
        assert_non_null(strstr(help_of(&cmd_run), want));
        snprintf(name, sizeof(name), "%s", po->name);
        snprintf(val, sizeof(val), "%s", valid_value(po->name));
        for (size_t i = 0; i < n; i++) {
            struct run_opts o;
            struct hb_err err = { 0 };
            int rc;

            snprintf(proto, sizeof(proto), "%s", proto_at(i)->name);
            rc = cli_parse_run(po->arg != NULL ? 5 : 4, argv, &o, stdout, &err);
            if (takes_always(proto_at(i), po->name)) {
                /* its own: parsed, or refused by the entry's check for another reason */
                assert_true(rc == 0 || strstr(err.msg, " for ") == NULL);
                some = true;
            } else if (proto_takes(proto_at(i), po->name) == NULL) {
                snprintf(want, sizeof(want), "run %s: ", proto_at(i)->name);
                assert_int_equal(rc, -EINVAL);
                assert_int_equal(strncmp(err.msg, want, strlen(want)), 0);
                assert_non_null(strstr(err.msg, po->name));
                assert_non_null(strstr(err.msg, " for "));
            }
        }
        assert_true(some);
        /* one option per name */
        for (size_t j = 0; j < nopts; j++)
            assert_string_not_equal(proto_option_name(j), po->name);
    }
    assert_true(nopts > 0);
    unlink(pw_file);
}

/* pg --password-file FILE, FILE made with mode: cli_parse_run's result, its message in err. */
static int pw_file_run(mode_t mode, struct run_opts *o, struct hb_err *err)
{
    char run[] = "run", pg[] = "pg", ep[] = "unix:/x", opt[] = "--password-file";
    char *argv[] = { run, pg, ep, opt, pw_file, NULL };
    int rc;

    pw_file_make(mode);
    rc = cli_parse_run(5, argv, o, stdout, err);
    unlink(pw_file);
    return rc;
}

/*
 * --password-file: the first line of a file only its owner may read or
 * write; one its group or others may is refused with one line saying why.
 */
static void test_password_file_mode(void **state)
{
    static const mode_t refused[] = { 0644, 0640, 0604, 0620, 0602 };
    static struct run_opts o;
    struct hb_err err = { 0 };
    char want[96];

    (void)state;
    assert_int_equal(pw_file_run(0600, &o, &err), 0);
    assert_string_equal(((const struct pg_opts *)&o.codec)->password, "pw");
    assert_int_equal(pw_file_run(0400, &o, &err), 0);
    for (size_t i = 0; i < ARRAY_LEN(refused); i++) {
        assert_int_equal(pw_file_run(refused[i], &o, &err), -EINVAL);
        snprintf(want, sizeof(want), "(mode %04o): chmod 600 it", (unsigned)refused[i]);
        if (strstr(err.msg, "--password-file: ") == NULL || strstr(err.msg, pw_file) == NULL ||
            strstr(err.msg, "group or others") == NULL || strstr(err.msg, want) == NULL)
            fail_msg("mode %04o: want a line naming the file and its mode, got '%s'",
                     (unsigned)refused[i], err.msg);
    }
}

/*
 * The options whose value main.c hides (ps, the evidence's command line) are
 * the registry's secret ones, found by their whole name only: --password,
 * which pg, mysql and redis take.
 */
static void test_secret(void **state)
{
    size_t n = proto_count(), nsecret = 0;
    const struct proto_option *po;

    (void)state;
    for (size_t i = 0; (po = proto_option_at(i)) != NULL; i++) {
        size_t len = strlen(po->name);
        assert_int_equal(proto_option_secret(po->name, len), po->secret);
        assert_false(proto_option_secret(po->name, len - 1));
        if (!po->secret) continue;
        nsecret++;
        assert_non_null(po->arg); /* a secret is a value */
        assert_non_null(strstr(po->help, "(hidden) in the evidence"));
        assert_non_null(strstr(po->help, "--password-file or HOPBENCH_PASSWORD"));
        assert_non_null(strstr(po->help, "is the safe way"));
    }
    assert_int_equal(nsecret, 1);
    assert_true(proto_option_secret("--password=x", strlen("--password")));
    assert_false(proto_option_secret("--password-file", strlen("--password-file")));
    for (size_t i = 0; i < n; i++) {
        const struct proto_entry *e = proto_at(i);
        bool has = false;
        for (const struct proto_take *t = e->takes; t != NULL && t->opt != NULL; t++)
            has |= t->opt->secret && strcmp(t->opt->name, "--password") == 0;
        assert_int_equal(has, strcmp(e->name, "pg") == 0 || strcmp(e->name, "mysql") == 0 ||
                                  strcmp(e->name, "redis") == 0);
    }
}

/* What each hook wrote, through the command line; a bad value is refused by the hook. */
static void test_option_hooks(void **state)
{
    struct run_opts o;
    struct hb_err err = { 0 };
    char run[] = "run", fcgi[] = "fcgi", redis[] = "redis", ep[] = "unix:/x";
    char param[] = "--param", a1[] = "A=1", b2[] = "B=2", body[] = "--expect-body";
    char text[] = "a\\nb", keys[] = "--keys", seven[] = "7", zero[] = "0", cmd[] = "--command";
    char get[] = "get", nope[] = "A";
    char *f1[] = { run, fcgi, ep, param, a1, param, b2, body, text, NULL };
    char *r1[] = { run, redis, ep, keys, seven, cmd, get, NULL };
    char *r2[] = { run, redis, ep, keys, zero, NULL };
    char *f2[] = { run, fcgi, ep, param, nope, NULL };
    char *r3[] = { run, redis, ep, param, a1, NULL };

    (void)state;
    const struct fcgi_opts *fo = (const struct fcgi_opts *)&o.codec;
    const struct resp_opts *ro = (const struct resp_opts *)&o.codec;

    assert_int_equal(cli_parse_run(9, f1, &o, stdout, &err), 0);
    assert_int_equal(fo->nparams, 2);
    assert_string_equal(fo->params[0], "A=1");
    assert_string_equal(fo->params[1], "B=2");
    assert_string_equal(fo->expect_body, "a\nb");
    assert_ptr_equal(o.load.opts, &o.codec);
    assert_int_equal(cli_parse_run(7, r1, &o, stdout, &err), 0);
    assert_int_equal(ro->keys, 7);
    assert_int_equal(ro->command.cmd, REDIS_GET);
    assert_int_equal(cli_parse_run(5, r2, &o, stdout, &err), -EINVAL);
    assert_string_equal(err.msg, "--keys: '0' is not a whole number in 1..1000000000");
    assert_int_equal(cli_parse_run(5, f2, &o, stdout, &err), -EINVAL);
    assert_string_equal(err.msg, "--param: 'A' is not NAME=VALUE");
    /* another protocol's option: the value is good, the protocol does not take it */
    assert_int_equal(cli_parse_run(5, r3, &o, stdout, &err), -EINVAL);
    assert_string_equal(err.msg,
                        "run redis: --script, --docroot, --query and --param are for fcgi");
}

/*
 * pg's --auth-method: libpq's names, each once, into their bits; mysql's
 * --server-public-key: an RSA public key in PEM, read whole; what is not
 * refused in one line naming it.
 */
static void test_auth_options(void **state)
{
    static const struct {
        const char *proto, *opt, *val, *error; /* error NULL: accepted */
    } cases[] = {
        { "pg", "--auth-method", "password", NULL },
        { "pg", "--auth-method", "scram-sha-256,md5,password,none", NULL },
        { "pg", "--auth-method", "md5,md5", "--auth-method: 'md5,md5' is not a list" },
        { "pg", "--auth-method", "gss", "--auth-method: 'gss' is not a list" },
        { "pg", "--auth-method", "md5,", "--auth-method: 'md5,' is not a list" },
        { "mysql", "--auth-method", "md5", "run mysql: --auth-method and --extended are for pg" },
        { "mysql", "--server-public-key", "tests/fixtures/mysql/server_public_key.pem", NULL },
        { "mysql", "--server-public-key", "/dev/null",
          "--server-public-key: /dev/null is not an RSA public key in PEM" },
        { "mysql", "--server-public-key", "/nonexistent/key.pem",
          "--server-public-key: cannot read /nonexistent/key.pem: No such file" },
        { "pg", "--server-public-key", "tests/fixtures/mysql/server_public_key.pem",
          "run pg: --server-public-key, --get-server-public-key and --ping are for mysql" },
    };
    static struct run_opts o;

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char run[] = "run", ep[] = "unix:/x", proto[16], opt[32], val[64];
        char *argv[] = { run, proto, ep, opt, val, NULL };
        struct hb_err err = { 0 };
        int rc;

        snprintf(proto, sizeof(proto), "%s", cases[i].proto);
        snprintf(opt, sizeof(opt), "%s", cases[i].opt);
        snprintf(val, sizeof(val), "%s", cases[i].val);
        rc = cli_parse_run(5, argv, &o, stdout, &err);
        if (cases[i].error == NULL) {
            if (rc != 0) fail_msg("%s %s: %s", cases[i].opt, cases[i].val, err.msg);
            continue;
        }
        assert_int_not_equal(rc, 0);
        if (strncmp(err.msg, cases[i].error, strlen(cases[i].error)) != 0)
            fail_msg("'%s' does not begin '%s'", err.msg, cases[i].error);
    }
    {
        char run[] = "run", pg[] = "pg", ep[] = "unix:/x", opt[] = "--auth-method";
        char val[] = "md5,none";
        char *argv[] = { run, pg, ep, opt, val, NULL };
        struct hb_err err = { 0 };

        assert_int_equal(cli_parse_run(5, argv, &o, stdout, &err), 0);
        assert_int_equal(((const struct pg_opts *)&o.codec)->auth_methods,
                         CODEC_AUTH_MD5 | CODEC_AUTH_NONE);
    }
}

/* The commands of a mix, as letters: "SGG". */
static void mix_text(const union codec_room *room, char *out)
{
    const struct codec_mix *m = &((const struct resp_opts *)room)->command;

    for (unsigned i = 0; i < m->len; i++)
        out[i] = m->mix[i] == REDIS_SET ? 'S' : m->mix[i] == REDIS_GET ? 'G' : 'P';
    out[m->len] = '\0';
}

/* run redis --command VAL [extra...]: what cli_parse_run returns. */
static int run_redis(struct run_opts *o, struct hb_err *err, const char *val, const char *x1,
                     const char *x2)
{
    char run[] = "run", redis[] = "redis", ep[] = "unix:/x", cmd[] = "--command", v[64], a[64],
         b[64];
    char *argv[] = { run, redis, ep, cmd, v, a, b, NULL };

    snprintf(v, sizeof(v), "%s", val);
    snprintf(a, sizeof(a), "%s", x1 != NULL ? x1 : "");
    snprintf(b, sizeof(b), "%s", x2 != NULL ? x2 : "");
    memset(err, 0, sizeof(*err));
    return cli_parse_run(x1 != NULL ? 7 : 5, argv, o, stdout, err);
}

static void test_redis_command(void **state)
{
    static const char *const bad[] = { "set,set", "set,foo",   "set:0,get",   "set,",
                                       ",get",    "set:x,get", "set:1:2,get", "set,get,ping,set" };
    const struct proto_entry *redis = proto_find("redis");
    struct run_opts o;
    struct hb_err err;
    union codec_room pre_room;
    const struct resp_opts *ro = (const struct resp_opts *)&o.codec;
    const struct resp_opts *pre = (const struct resp_opts *)&pre_room;
    char text[CODEC_MIX_MAX + 1];
    unsigned gets = 0;

    (void)state;
    assert_int_equal(run_redis(&o, &err, "set,get", "--size", "100"), 0);
    mix_text(&o.codec, text);
    assert_string_equal(text, "SG");
    assert_int_equal(o.load.size, 100);
    /* a mix that GETs fills its keys first: SET each once */
    assert_int_equal(redis->prepare(&o.codec, &pre_room), 1);
    assert_int_equal(pre->command.cmd, REDIS_SET);
    assert_int_equal(pre->command.len, 0);
    assert_int_equal(run_redis(&o, &err, "get,ping", "--keys", "40"), 0);
    mix_text(&o.codec, text);
    assert_string_equal(text, "GP");
    assert_int_equal(redis->prepare(&o.codec, &pre_room), 40);
    assert_int_equal(pre->keys, 40);
    assert_int_equal(run_redis(&o, &err, "set:1,get:9", NULL, NULL), 0);
    assert_int_equal(ro->command.len, 10);
    for (unsigned i = 0; i < 10; i++)
        gets += ro->command.mix[i] == REDIS_GET;
    assert_int_equal(gets, 9);
    assert_int_equal(run_redis(&o, &err, "set:2,ping:1", NULL, NULL), 0);
    mix_text(&o.codec, text);
    assert_int_equal(strlen(text), 3);
    assert_int_equal(redis->prepare(&o.codec, &pre_room), 0); /* no GET: nothing before */
    /* one command is that command alone; a lone GET's size is the value it expects */
    assert_int_equal(run_redis(&o, &err, "get", NULL, NULL), 0);
    assert_int_equal(ro->command.len, 0);
    assert_int_equal(ro->command.cmd, REDIS_GET);
    assert_int_equal(o.load.size, 0);
    assert_int_equal(run_redis(&o, &err, "get", "--expect-body", "xxxxx"), 0);
    assert_int_equal(o.load.size, 5);
    /* refused: --expect-body in a mix, shares above the period, words that are no mix */
    assert_int_equal(run_redis(&o, &err, "set,get", "--expect-body", "x"), -EINVAL);
    assert_string_equal(
        err.msg, "run redis: --expect-body is for http, fcgi, redis --command get, pg and mysql");
    assert_int_equal(run_redis(&o, &err, "set:60,get:41", NULL, NULL), -EINVAL);
    assert_string_equal(err.msg,
                        "--command: the shares of 'set:60,get:41' add up to more than 100");
    assert_int_equal(run_redis(&o, &err, "put", NULL, NULL), -EINVAL);
    assert_string_equal(err.msg, "--command: 'put' is not ping, set or get");
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(run_redis(&o, &err, bad[i], NULL, NULL), -EINVAL);
        assert_non_null(strstr(err.msg, "is not ping, set and get in turn"));
    }
}

/* hopbench followed by args (NULL-terminated, at most 15): what cli_parse_run returns. */
static int run_args(struct run_opts *o, struct hb_err *err, const char *const *args)
{
    static char store[16][96];
    char *argv[17];
    int n = 0;

    for (; args[n] != NULL && n < 16; n++) {
        snprintf(store[n], sizeof(store[n]), "%s", args[n]);
        argv[n] = store[n];
    }
    argv[n] = NULL;
    memset(err, 0, sizeof(*err));
    return cli_parse_run(n, argv, o, stdout, err);
}

/* The statements' indices of an SQL mix's period, as text: "00100". */
static void sql_mix_text(const struct codec_sql *q, char *out)
{
    for (unsigned i = 0; i < q->mix_len; i++)
        out[i] = (char)('0' + q->mix[i]);
    out[q->mix_len] = '\0';
}

static void test_sql_mix(void **state)
{
    static const char *const mix[] = {
        "run", "pg", "unix:/x", "--sql", "4:SELECT 1", "--sql", "1:UPDATE t SET k = 1", NULL
    };
    static const char *const one[] = { "run", "mysql", "unix:/x", "--sql", "SELECT '1:2'", NULL };
    static const char *const many[] = { "run",   "pg", "unix:/x", "--sql", "A",     "--sql", "B",
                                        "--sql", "C",  "--sql",   "D",     "--sql", "E",     NULL };
    static const char *const body[] = { "run",   "mysql", "unix:/x",       "--sql", "A",
                                        "--sql", "B",     "--expect-body", "1",     NULL };
    static const char *const bad[][2] = {
        { "0:SELECT 1", "--sql: the share in '0:SELECT 1...' is not 1 to 100" },
        { "101:SELECT 1", "--sql: the share in '101:SELECT 1...' is not 1 to 100" },
        { "5:", "--sql: empty" },
    };
    struct run_opts o;
    struct hb_err err;
    char text[CODEC_SQL_MIX_MAX + 1];
    /* pg's and mysql's options both begin with their statements */
    const struct codec_sql *q = &((const struct pg_opts *)&o.codec)->sql;

    (void)state;
    assert_ptr_equal(q, &((const struct mysql_opts *)&o.codec)->sql);
    assert_int_equal(run_args(&o, &err, mix), 0);
    assert_int_equal(q->nsql, 2);
    assert_string_equal(q->sqls[0], "SELECT 1");
    assert_string_equal(q->sqls[1], "UPDATE t SET k = 1");
    assert_ptr_equal(q->text, q->sqls[0]);
    sql_mix_text(q, text);
    assert_string_equal(text, "00100");
    /* the statements differ: each connection encodes its own, in the mix's order */
    assert_false(codec_fixed(&pg_codec, &(struct codec_cfg){ .opts = &o.codec }));
    /* a colon later in a statement is no share; mysql takes --sql as pg does */
    assert_int_equal(run_args(&o, &err, one), 0);
    assert_int_equal(q->nsql, 1);
    assert_string_equal(q->text, "SELECT '1:2'");
    /* one statement, however given: the same bytes every time, encoded once per thread */
    assert_true(codec_fixed(&mysql_codec, &(struct codec_cfg){ .opts = &o.codec }));
    assert_int_equal(run_args(&o, &err, many), -EINVAL);
    assert_string_equal(err.msg, "--sql: at most 4 statements");
    assert_int_equal(run_args(&o, &err, body), -EINVAL);
    assert_string_equal(err.msg,
                        "run mysql: --expect-body checks one statement's row; give --sql once");
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *args[] = { "run", "pg", "unix:/x", "--sql", bad[i][0], NULL };
        assert_int_equal(run_args(&o, &err, args), -EINVAL);
        assert_string_equal(err.msg, bad[i][1]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entries),       cmocka_unit_test(test_names),
        cmocka_unit_test(test_list),          cmocka_unit_test(test_every_option),
        cmocka_unit_test(test_run_messages),  cmocka_unit_test(test_serve_lab_messages),
        cmocka_unit_test(test_help),          cmocka_unit_test(test_help_words),
        cmocka_unit_test(test_options),       cmocka_unit_test(test_password_file_mode),
        cmocka_unit_test(test_option_hooks),  cmocka_unit_test(test_auth_options),
        cmocka_unit_test(test_redis_command), cmocka_unit_test(test_secret),
        cmocka_unit_test(test_sql_mix),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
